# queuectl completion for fish (~/.config/fish/completions/queuectl.fish):
# queuectl completion fish > ~/.config/fish/completions/queuectl.fish
# `queuectl __complete WORDS` only prints candidates: it never runs a command.
function __queuectl_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    set -l out ($words[1] __complete $words[2..-1] "$cur" 2>/dev/null </dev/null)
    switch "$out[1]"
        case :commands
            __fish_complete_command
        case :files
            __fish_complete_path "$cur"
        case '*'
            printf '%s\n' $out
    end
end
complete -c queuectl -f -a '(__queuectl_complete)'
