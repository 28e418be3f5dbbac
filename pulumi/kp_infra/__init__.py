"""Components of the Kubernetes path, one ComponentResource per concern."""
