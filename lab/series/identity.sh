#!/bin/bash
# Sourced: is_placeholder "Name <email>" succeeds for an identity nobody
# can sign a patch off with: the lab's own placeholder, an address in a
# domain reserved for examples or never delivered (RFC 2606, RFC 6761),
# a noreply address, or no address at all.
is_placeholder() {
	local id=$1 email domain
	[[ "$id" =~ \<([^\>]*)\> ]] || return 0
	email=${BASH_REMATCH[1],,}
	[[ "$email" == *@* ]] || return 0
	domain=${email##*@}
	case "$id" in
	"Lab Developer <"*) return 0 ;;
	esac
	case "$email" in
	*noreply* | *no-reply*) return 0 ;;
	esac
	case ".$domain" in
	*.invalid | *.example | *.test | *.localhost | *.local | \
		*.example.com | *.example.org | *.example.net | \
		.example.com | .example.org | .example.net) return 0 ;;
	esac
	return 1
}
