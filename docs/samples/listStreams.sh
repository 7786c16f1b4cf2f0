curl -s "$LIVE_STREAM_HOSTING_BASE_URL/streams?status=live&limit=20" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY"
