curl -s "$LIVE_STREAM_HOSTING_BASE_URL/requests/$REQUEST_ID" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY"
