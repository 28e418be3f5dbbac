"""Ansible's linear strategy run through Mitogen (the `mitogen` package the venv pins).

Ansible's own linear strategy forks a worker per task and host, which builds the
module's payload and starts a Python interpreter to run it: about 0.35 s of CPU per
task and host here, and `make up` runs some 350. Mitogen keeps one interpreter per host
for the whole play and sends it the modules: the same playbook of 20 tasks on the 3
local hosts took 25 s of CPU with linear and 5 s with this.

The plugin itself lives in the mitogen package (ansible_mitogen.strategy); this file
only puts it on ansible.cfg's strategy_plugins path, so no path into the venv's
site-packages is written anywhere. `ANSIBLE_STRATEGY=linear` runs without it.
"""

import ansible_mitogen.affinity
import ansible_mitogen.loaders
import ansible_mitogen.strategy

# Mitogen pins its processes to CPUs, and on a machine of fewer than 4 it keeps CPU 0
# for its multiplexer and everything else, the commands its modules start included, on
# the rest. On 2 cores the services `make up` starts inherited that: three brokers,
# Connect and the registry shared one core, and a cold `make up` took 270 s, not 170.
# The base Policy pins nothing.
ansible_mitogen.affinity.policy = ansible_mitogen.affinity.Policy()

Base = ansible_mitogen.loaders.strategy_loader.get("linear", class_only=True)


class StrategyModule(ansible_mitogen.strategy.StrategyMixin, Base):
    pass
