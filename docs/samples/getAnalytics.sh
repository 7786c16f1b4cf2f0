curl -s "$LIVE_STREAM_HOSTING_BASE_URL/analytics?period=7d" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY"
