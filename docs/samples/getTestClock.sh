curl -s "$LIVE_STREAM_HOSTING_BASE_URL/test-clock" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY"
