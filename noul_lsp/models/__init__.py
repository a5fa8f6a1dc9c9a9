"""Model registry and loading: the bundled default, local directories, hub downloads on request."""
