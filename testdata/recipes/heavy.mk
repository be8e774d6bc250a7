# Compress every log in logs/ as a job of queuectl's "heavy" queue. Once
#   queuectl queue set heavy --max-running 2
# at most two compressions run at once, however many make -j builds, cron
# jobs and scripts start them. Each `queuectl run` line writes its job's
# output here and exits with the job's exit code, so make -j4 stops at the
# first failure as it always does. The jobs run in this directory; each is
# labelled with its input, which run's notices name.
Q        ?= queuectl
COMPRESS ?= xz -k -f -9

LOGS := $(wildcard logs/*.log)

.PHONY: all
all: $(LOGS:=.xz)

%.log.xz: %.log
	$(Q) run --queue heavy --label $< -- $(COMPRESS) $<
