curl -s -X POST "$LIVE_STREAM_HOSTING_BASE_URL/webhooks" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY" \
  -H "Content-Type: application/json" \
  -d '{"url": "https://hooks.example.com/live-stream", "events": ["stream.started", "stream.ended", "stream.error"]}'
