# Test keys only. Server-sent events, one per test-mode event; this stops after 5 seconds.
# `npx live-stream-hosting listen --forward-to <url>` forwards them, signed, to your receiver.
curl -sN --max-time 5 "$LIVE_STREAM_HOSTING_BASE_URL/webhooks/listen?events=stream.started,stream.ended" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY"
