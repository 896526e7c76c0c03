import pytest

from agentutil import agent_project, stop_agents


@pytest.fixture
def agent_projects(tmp_path):
    """agent_projects(config, name="project", **env) -> a Project whose commands start the
    agent; every agent of every such project is stopped when the test ends."""
    made = []

    def make(config: str, name: str = "project", **env: str):
        project = agent_project(tmp_path, config, name, **env)
        made.append(project)
        return project

    yield make
    for project in made:
        stop_agents(project)
