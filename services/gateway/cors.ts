// The CORS headers of the routes a merchant's site calls from the browser.
/** CORS for every route a browser on a merchant's site calls (methods.ts lists their prefixes); /admin and the dashboard have none. */
export const CORS = {
	origin: "*",
	methods: ["GET", "POST", "DELETE", "PATCH", "OPTIONS"],
	allowedHeaders: ["Authorization", "Content-Type", "X-API-Version", "Idempotency-Key"],
	exposedHeaders: ["Retry-After", "X-Request-ID"],
	maxAge: 600,
};
