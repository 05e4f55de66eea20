#!/bin/sh
# A broken installation: the CLI fails before it speaks its protocol.
echo "Error: Cannot find module '/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js'" >&2
exit 1
