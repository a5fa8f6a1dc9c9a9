"""Which files make up a workspace, and how changes to them are noticed."""
