curl -s -X DELETE "$LIVE_STREAM_HOSTING_BASE_URL/webhooks?id=$WEBHOOK_ID" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY"
