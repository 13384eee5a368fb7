# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by gen-series.sh and gen-request.sh: who the mails are from.
#
# ident_of REPO GIT_IDENTITY: "Name <email>". With GIT_IDENTITY set, the
# sender's git config user.name and user.email (never an example.*
# address); else the project identity of patchgen/author, for the
# committed drafts. Calls die on failure.
ident_of() {
	local name email
	if [ -z "$2" ]; then
		head -n1 "$1/patchgen/author"
		return
	fi
	name=$(git -C "$1" config user.name || true)
	email=$(git -C "$1" config user.email || true)
	if [ -z "$name" ] || [ -z "$email" ]; then
		die "-g needs git config user.name and user.email (set them, then run again)."
	fi
	case ${email,,} in
	*@example.* | *.example.* | *@example)
		die "git config user.email is $email, an example address: set your own, then run again." ;;
	esac
	echo "$name <$email>"
}
