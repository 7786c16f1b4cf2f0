curl -s -X POST "$LIVE_STREAM_HOSTING_BASE_URL/webhooks/deliveries/$DELIVERY_ID/retry" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY" \
  -H "Idempotency-Key: retry-$DELIVERY_ID-$(date +%s)"
