#!/usr/bin/env bash
# kafka-storage.sh format|info|random-uuid ...: KRaft storage (Strimzi's kafka_run.sh
# formats every log directory before the node starts).
exec "$(dirname "$0")/kafka-run-class.sh" kafka.tools.StorageTool "$@"
