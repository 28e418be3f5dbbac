"""The platform's monitoring daemons: the delivery canary, the consumer-group lag
exporter, the supervisor that restarts them, and the dashboards drawn from Prometheus."""
