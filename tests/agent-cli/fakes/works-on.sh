#!/bin/sh
# Starts a turn that goes on for minutes: a tool of its own runs in the background (a
# child in its process group) while it "works". Only a kill ends it.
read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{}}}\n' "$id"
read -r line
sleep 600 &
echo '{"type":"stream_event","parent_tool_use_id":null,"event":{"type":"message_start","message":{"id":"m1"}}}'
echo '{"type":"stream_event","parent_tool_use_id":null,"event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Working on it"}}}'
wait
