"""What every command line of ours does at its edges: `files` reads a file it was given
(a regular file, at most the skill's request limit), `pipes` ends quietly when its reader
goes away and refuses a bad flag in one line. The command lines themselves live at the
app layer (`skills.commands`)."""
