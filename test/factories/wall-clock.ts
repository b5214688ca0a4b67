// The wall clock moved forward for the services running in the test's process
// (Date only): timers, ticks and performance keep real time, so requests,
// polls and timeouts go on as usual. Undo with jest.useRealTimers().
export function setWallClock(at: number): void {
	jest.useFakeTimers({
		doNotFake: [
			"nextTick",
			"setImmediate",
			"setTimeout",
			"setInterval",
			"clearTimeout",
			"clearInterval",
			"queueMicrotask",
			"hrtime",
			"performance",
		],
	});
	jest.setSystemTime(at);
}
