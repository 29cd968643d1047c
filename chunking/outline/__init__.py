"""The outline beyond parsing: the section tree and the plain outline planning runs on."""
