"""Runs SWE-bench's harness (`python -m swebench.harness.run_evaluation ARGS`) on an
engine that other tests use at the same time.

The harness lists every image and container with docker-py, which asks the engine for
the list and then inspects each entry in turn; an entry that another test removes in
between makes the inspection fail with 404, and the harness stops (seen in CI on
2026-11-26 and 2026-11-27). Here an entry removed in between is left out of the list,
as docker-py's own `containers.list(ignore_removed=True)` does for containers: the list
is what the engine holds once the listing ends. Nothing else of the harness or of
docker-py changes.
"""

import runpy
import sys

import docker.errors
from docker.models.containers import ContainerCollection
from docker.models.images import ImageCollection


def images_still_there(self, name=None, all=False, filters=None):
    images = []
    for entry in self.client.api.images(name=name, all=all, filters=filters):
        try:
            images.append(self.get(entry["Id"]))
        except docker.errors.ImageNotFound:
            pass
    return images


list_containers = ContainerCollection.list


def containers_still_there(self, *args, **kwargs):
    kwargs["ignore_removed"] = True
    return list_containers(self, *args, **kwargs)


ImageCollection.list = images_still_there
ContainerCollection.list = containers_still_there
sys.argv = ["swebench.harness.run_evaluation", *sys.argv[1:]]
runpy.run_module("swebench.harness.run_evaluation", run_name="__main__", alter_sys=True)
