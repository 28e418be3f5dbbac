"""What the platform is declared to be: the catalogue (patterns, jobs, topics, users),
the inventory of the cluster it runs on, the settings a process reads from its
environment, the users' credentials and the record schemas. Imports nothing else of
the project."""
