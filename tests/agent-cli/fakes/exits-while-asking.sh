#!/bin/sh
# Asks for permission to write a file, then dies before the answer comes.
read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{}}}\n' "$id"
read -r line
echo '{"type":"stream_event","parent_tool_use_id":null,"event":{"type":"message_start","message":{"id":"m1"}}}'
echo '{"type":"control_request","request_id":"p1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"/tmp/never-written"},"tool_use_id":"t1"}}'
sleep 1
echo "fatal: lost while asking" >&2
exit 3
