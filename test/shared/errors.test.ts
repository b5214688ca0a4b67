import { isOutageError } from "../../shared/errors";

describe("isOutageError (503 at the gateway, counted by the circuit breaker)", () => {
	test.each([
		["RequestTimeoutError", undefined, "Request is timed out"],
		["RequestRejectedError", 503, "Request is rejected when call 'checkout.submit' action on 'checkout-1' node."],
		["MongoNetworkError", undefined, "connection closed"],
		["MongoNetworkTimeoutError", undefined, "connection timed out"],
		["MongoPoolClearedError", undefined, "Connection pool was cleared"],
		["PoolClearedOnNetworkError", undefined, "Connection to 127.0.0.1 interrupted due to server monitor timeout"],
		["MongoServerSelectionError", undefined, "connect ECONNREFUSED"],
		["MongoServerError", 11600, "interrupted at shutdown"],
		["MongoServerError", 91, "shutdown in progress"],
		["MongooseError", undefined, "Operation `customers.findOne()` buffering timed out after 10000ms"],
		["Error", "EPIPE", "This socket has been ended by the other party"],
		["MoleculerError", 500, "Error: This socket has been ended by the other party"],
	])("When the error is %s (code %s), then it is an outage", (name, code, message) => {
		expect(isOutageError({ name, code, message })).toBe(true);
	});

	test.each([
		["with the network error it met", { name: "MongoNetworkError", message: "connection 4 to 127.0.0.1:27017 closed" }],
		["from another node (its message only)", undefined],
	])("When a bulk write was cut off by the outage, %s, then it is an outage", (_, errorResponse) => {
		expect(isOutageError({ name: "MongoBulkWriteError", message: "connection 4 to 127.0.0.1:27017 closed", errorResponse })).toBe(true);
	});

	test("When a bulk write failed on a duplicate key, then it is not an outage", () => {
		const errorResponse = { name: "MongoServerError", code: 11000, message: "E11000 duplicate key error" };

		expect(isOutageError({ name: "MongoBulkWriteError", message: "E11000 duplicate key error", errorResponse })).toBe(false);
	});

	test.each([
		["MongoServerError", 11000, "E11000 duplicate key error"],
		["MongoServerError", 2, "bad query"],
		["MongooseError", undefined, "Model.findOne() no longer accepts a callback"],
		["TypeError", undefined, "Cannot read properties of null"],
		["MoleculerError", 500, "Something else went wrong"],
		["ValidationError", undefined, "Parameters validation error"],
	])("When the error is %s (code %s), then it is not an outage", (name, code, message) => {
		expect(isOutageError({ name, code, message })).toBe(false);
	});
});
