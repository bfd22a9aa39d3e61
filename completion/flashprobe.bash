# bash completion for flashprobe(1).
#
# Commands come from 'flashprobe --help', each command's options from
# 'flashprobe help COMMAND' and simulated cards from 'flashprobe
# list-sims', so the completion follows the binary it completes for.
# Installed by 'make install' as
# $(PREFIX)/share/bash-completion/completions/flashprobe.

# The first column of a help text: option names, "=" after those that
# take a value.
_flashprobe_options()
{
	"$1" help "$2" 2>/dev/null |
		sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\)\(=\{0,1\}\).*/\2\3/p'
}

_flashprobe_commands()
{
	"$1" --help 2>/dev/null |
		sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\).*/\1/p'
}

_flashprobe_sims()
{
	"$1" list-sims 2>/dev/null | sed -n '2,$s/^\([^ ]*\).*/sim:\1/p'
}

# Offer the words of $2 that start with $1 (one per line).
_flashprobe_offer()
{
	local w
	while IFS= read -r w; do
		[[ -n $w && $w == "$1"* ]] && COMPREPLY+=("$w")
	done <<<"$2"
}

_flashprobe()
{
	local prog=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} word opt=
	local cmd= commands i w
	local -i at=COMP_CWORD
	COMPREPLY=()

	# "--label=g" and "sim:se" arrive in pieces when '=' and ':' break
	# words (COMP_WORDBREAKS): join them back
	word=$cur
	while ((at > 1)) && [[ ${COMP_WORDS[at - 1]} == [=:] || $word == [=:]* ]]; do
		word=${COMP_WORDS[at - 1]}$word
		at=at-1
	done
	if [[ $word == --*=* ]]; then
		opt=${word%%=*}
		word=${word#*=}
	fi

	commands=$(_flashprobe_commands "$prog")
	for ((i = 1; i < at; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-a | --align) cmd=align ;;
		-O | --open-au) cmd=open-au ;;
		-f | --find-fat | --findfat) cmd=find-fat ;;
		-* | = | :) ;;
		*)
			if [[ -z $cmd ]] && grep -qx -- "$w" <<<"$commands"; then
				cmd=$w
			fi
			;;
		esac
	done

	case $opt in
	--label) _flashprobe_offer "$word" $'dos\ngpt' ;;
	--workload) _flashprobe_offer "$word" $'all\nseq_read\nseq_write\nrand_read\nrand_write' ;;
	--svg | --journal) COMPREPLY=($(compgen -f -- "$word")) ;;
	--sysfs-root) COMPREPLY=($(compgen -d -- "$word")) ;;
	--*) ;;	# a number, a size or a time: nothing to offer
	*)
		if [[ $word == -* ]]; then
			_flashprobe_offer "$word" "$(_flashprobe_options "$prog" "${cmd:-probe}")"
			[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] &&
				compopt -o nospace 2>/dev/null
		elif [[ $cmd == help ]]; then
			_flashprobe_offer "$word" "$commands"
		elif [[ -z $cmd && $word != */* && $word != sim:* ]]; then
			_flashprobe_offer "$word" "$commands"
			_flashprobe_offer "$word" "$(_flashprobe_sims "$prog")"
			COMPREPLY+=($(compgen -f -- "$word"))
		elif [[ $cmd != list-sims ]]; then
			_flashprobe_offer "$word" "$(_flashprobe_sims "$prog")"
			[[ $word == sim:* ]] || COMPREPLY+=($(compgen -f -- "$word"))
		fi
		;;
	esac

	# readline replaces only the text after the last break character
	if [[ $COMP_WORDBREAKS == *:* && $word == *:* ]]; then
		local prefix=${word%"${word##*:}"}
		COMPREPLY=("${COMPREPLY[@]#"$prefix"}")
	fi
	return 0
}

complete -F _flashprobe flashprobe
