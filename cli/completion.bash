# queuectl completion for bash (~/.bashrc) and zsh (~/.zshrc, after
# `autoload -U +X compinit bashcompinit && compinit && bashcompinit`).
_queuectl() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local words=("${COMP_WORDS[@]:0:$COMP_CWORD}")
  [[ $cur == -* ]] && words+=("$cur")
  COMPREPLY=($(compgen -W "$("${words[@]}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
}
complete -o default -F _queuectl queuectl
