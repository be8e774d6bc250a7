# queuectl completion for fish (~/.config/fish/completions/queuectl.fish):
# queuectl completion fish > ~/.config/fish/completions/queuectl.fish
function __queuectl_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    if string match -q -- '-*' $cur
        set words $words $cur
    end
    $words --generate-bash-completion 2>/dev/null
end
complete -c queuectl -f -a '(__queuectl_complete)'
