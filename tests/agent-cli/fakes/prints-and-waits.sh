#!/bin/sh
# Prints text instead of stream-json and never answers (a wrapper stuck on a prompt).
echo "Press any key to continue"
exec sleep 600
