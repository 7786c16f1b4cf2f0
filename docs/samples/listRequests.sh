curl -s "$LIVE_STREAM_HOSTING_BASE_URL/requests?status=4xx&limit=20" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY"
