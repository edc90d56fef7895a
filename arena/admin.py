"""Admin registrations arrive with the models they show."""
