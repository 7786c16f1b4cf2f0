curl -s "$LIVE_STREAM_HOSTING_BASE_URL/creators"
