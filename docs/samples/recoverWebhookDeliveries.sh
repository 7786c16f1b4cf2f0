curl -s -X POST "$LIVE_STREAM_HOSTING_BASE_URL/webhooks/recover" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY" \
  -H "Content-Type: application/json" \
  -d "{\"webhook_id\": \"$WEBHOOK_ID\", \"since\": \"$(date -u -d '-2 hours' +%Y-%m-%dT%H:%M:%SZ)\"}"
