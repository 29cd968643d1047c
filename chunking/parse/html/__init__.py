"""HTML: `tree` parses the page, `main_content` decides which parts are the document,
`heading_debris` cleans heading text, and `render` walks the tree once into a
markdown-like text and its outline."""
