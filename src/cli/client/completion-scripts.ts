/**
 * Shell completion scripts generated from the command tree: every command path maps to the words that may follow
 * it (its subcommands and flags). The scripts find the path by skipping flags and matching known command names.
 */
export interface CommandNode {
  path: string;
  words: string[];
}

const q = (s: string) => s.replace(/'/g, "'\\''");

export function bashScript(nodes: CommandNode[]): string {
  const paths = nodes.filter((n) => n.path).map((n) => n.path.replace(/ /g, '\\ '));
  const cases = nodes.map((n) => `    '${q(n.path)}') words='${q(n.words.join(' '))}' ;;`).join('\n');
  return `# bash completion for svc: eval "$(svc completion bash)" (e.g. in ~/.bashrc)
_svc() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" next i w words=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    next="\${path:+$path }$w"
    case "$next" in
      ${paths.join('|') || '__none__'}) path="$next" ;;
    esac
  done
  case "$path" in
${cases}
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -F _svc svc
`;
}

export function zshScript(nodes: CommandNode[]): string {
  const paths = nodes.filter((n) => n.path).map((n) => `'${q(n.path)}'`);
  const cases = nodes.map((n) => `    ('${q(n.path)}') choices=(${n.words.map((w) => `'${q(w)}'`).join(' ')}) ;;`).join('\n');
  return `#compdef svc
# zsh completion for svc: eval "$(svc completion zsh)" (e.g. in ~/.zshrc, after compinit)
_svc() {
  local svc_path="" next w
  local -a choices known
  known=(${paths.join(' ')})
  for w in \${words[2,CURRENT-1]}; do
    [[ "$w" == -* ]] && continue
    next="\${svc_path:+$svc_path }$w"
    (( \${known[(Ie)$next]} )) && svc_path="$next"
  done
  case "$svc_path" in
${cases}
  esac
  compadd -- $choices
}
compdef _svc svc
`;
}

export function fishScript(nodes: CommandNode[]): string {
  const known = nodes.filter((n) => n.path).map((n) => `'${q(n.path)}'`).join(' ');
  const lines = nodes.map((n) => `complete -c svc -n 'test "(__svc_path)" = "${n.path}"' -a '${q(n.words.join(' '))}'`).join('\n');
  return `# fish completion for svc: svc completion fish > ~/.config/fish/completions/svc.fish
function __svc_path
    set -l known ${known}
    set -l path ''
    for w in (commandline -opc)[2..-1]
        string match -q -- '-*' $w; and continue
        set -l next (string trim -- "$path $w")
        contains -- $next $known; and set path $next
    end
    echo $path
end
complete -c svc -f
${lines}
`;
}
