# A desktop notification when a job completes, and a critical one with the
# end of its stderr when it dies. The hook reads the job from its
# environment; quoted like this, nothing a job prints can run as code.
queuectl config set on-success 'notify-send "queuectl: $QUEUECTL_JOB_ID completed"'
queuectl config set on-dead 'notify-send --urgency=critical "queuectl: $QUEUECTL_JOB_ID is dead" "$QUEUECTL_ERROR: $(tail -n 3 "$QUEUECTL_STDERR" 2>/dev/null)"'
