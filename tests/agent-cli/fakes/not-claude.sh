#!/bin/sh
# Not Claude Code: another program that prints text and exits (what a wrong
# COLLOQUY_CLAUDE_PATH finds).
echo "NotClaude 1.0 - a friendly file viewer"
echo "usage: notclaude [options] FILE"
exit 0
