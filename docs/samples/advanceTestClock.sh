curl -s -X POST "$LIVE_STREAM_HOSTING_BASE_URL/test-clock/advance" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY" \
  -H "Content-Type: application/json" \
  -d '{"seconds": 7200}'
