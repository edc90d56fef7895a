#!/bin/sh
# Packages installed during `docker build` must not try to start their services: there is no
# init in a container, and the service is started by the container's own command instead.
exit 101
