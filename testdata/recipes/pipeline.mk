# A pipeline that fans out and joins: fetch, then build-linux and
# build-mac at once, then package. Each step is a job that waits (after)
# until the steps it needs completed; if one dies, every step after it dies
# too, so `wait` on the last step fails the target and make with it.
QUEUECTL ?= queuectl
TIMEOUT  ?= 1h
FETCH    ?= git pull --ff-only
LINUX    ?= GOOS=linux go build -o out/app-linux .
MAC      ?= GOOS=darwin go build -o out/app-mac .
PACKAGE  ?= tar czf out/app.tgz out/app-linux out/app-mac

.PHONY: release
release:
	a=$$($(QUEUECTL) enqueue -q --cwd '$(CURDIR)' --command '$(FETCH)') && \
	b=$$($(QUEUECTL) enqueue -q --cwd '$(CURDIR)' --after "$$a" --command '$(LINUX)') && \
	c=$$($(QUEUECTL) enqueue -q --cwd '$(CURDIR)' --after "$$a" --command '$(MAC)') && \
	d=$$($(QUEUECTL) enqueue -q --cwd '$(CURDIR)' --after "$$b" --after "$$c" --command '$(PACKAGE)') && \
	$(QUEUECTL) wait --timeout $(TIMEOUT) "$$d"
