# queuectl completion for bash (~/.bashrc) and zsh (~/.zshrc, after
# `autoload -U +X compinit bashcompinit && compinit && bashcompinit`).
# `queuectl __complete WORDS` only prints candidates: it never runs a command.
_queuectl() {
  local cur=${COMP_WORDS[COMP_CWORD]} IFS=$'\n'
  [[ $cur == = ]] && cur= # --flag=<TAB>: bash made "=" a word of its own
  local -a out
  out=($("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:$COMP_CWORD}" 2>/dev/null </dev/null))
  case ${out[0]} in
  :commands) COMPREPLY=($(compgen -c -- "$cur" | sort -u)) ;;
  :files) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
  *) COMPREPLY=($(compgen -W "${out[*]}" -- "$cur")) ;;
  esac
}
complete -o default -F _queuectl queuectl
