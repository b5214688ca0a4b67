// Events every node may send to the services of its own process. Types only.

export interface RuntimeEvents {
	/** SIGTERM: stop taking new work (a renewal cycle stops claiming customers) before requests drain. */
	"broker.draining": Record<string, never>;
}
