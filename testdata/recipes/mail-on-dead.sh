# Mail yourself when a job dies: its error and the last 20 lines of its
# stderr, through the local MTA's sendmail.
queuectl config set on-dead '{
  printf "Subject: queuectl: job %s is dead\n\n%s after %s runs\n\n" "$QUEUECTL_JOB_ID" "$QUEUECTL_ERROR" "$QUEUECTL_ATTEMPT"
  tail -n 20 "$QUEUECTL_STDERR" 2>/dev/null
} | sendmail "$(id -un)"'
