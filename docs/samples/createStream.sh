curl -s -X POST "$LIVE_STREAM_HOSTING_BASE_URL/streams" \
  -H "Authorization: Bearer $LIVE_STREAM_HOSTING_API_KEY" \
  -H "Content-Type: application/json" \
  -d '{"creator_id": "avt_Qfmm3FkkaQM0", "product_name": "Summer sneakers drop", "platform": "youtube", "duration_minutes": 30}'
