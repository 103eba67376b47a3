// The C floor of pasteboard-bench: the echo service written straight on libdbus, so that the
// benchmark measures pasteboardd against what D-Bus itself costs, with nothing of the
// project's own D-Bus layer inside the floor.
//
//   pasteboard-c-floor ADDRESS
//
// Owns org.pasteboardd.BenchCEcho and serves, at /org/pasteboardd/BenchEcho, the interface
// org.pasteboardd.BenchEcho: Set(ay) keeps the bytes, Get() -> ay returns them, Emit() replies
// and then emits Pinged (as pasteboardd emits Changed after a write's reply). One blocking
// loop, as a C service would be written; it ends when the bus goes away.
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "org.pasteboardd.BenchCEcho"
#define PATH "/org/pasteboardd/BenchEcho"
#define INTERFACE "org.pasteboardd.BenchEcho"

static unsigned char *stored;
static int stored_length;

static DBusHandlerResult handle(DBusConnection *connection, DBusMessage *message, void *data) {
    (void)data;
    if (dbus_message_get_type(message) != DBUS_MESSAGE_TYPE_METHOD_CALL) return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    DBusMessage *reply = NULL;
    DBusMessage *signal = NULL;
    if (dbus_message_is_method_call(message, INTERFACE, "Set")) {
        DBusMessageIter arguments, array;
        if (!dbus_message_iter_init(message, &arguments) || dbus_message_iter_get_arg_type(&arguments) != DBUS_TYPE_ARRAY
            || dbus_message_iter_get_element_type(&arguments) != DBUS_TYPE_BYTE) {
            reply = dbus_message_new_error(message, DBUS_ERROR_INVALID_ARGS, "Set takes ay");
        } else {
            const unsigned char *bytes;
            int length;
            dbus_message_iter_recurse(&arguments, &array);
            dbus_message_iter_get_fixed_array(&array, &bytes, &length);
            unsigned char *copy = malloc(length > 0 ? (size_t)length : 1);
            if (length > 0) memcpy(copy, bytes, (size_t)length);
            free(stored);
            stored = copy;
            stored_length = length;
            reply = dbus_message_new_method_return(message);
        }
    } else if (dbus_message_is_method_call(message, INTERFACE, "Get")) {
        reply = dbus_message_new_method_return(message);
        DBusMessageIter arguments, array;
        dbus_message_iter_init_append(reply, &arguments);
        dbus_message_iter_open_container(&arguments, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE_AS_STRING, &array);
        const unsigned char *bytes = stored;
        dbus_message_iter_append_fixed_array(&array, DBUS_TYPE_BYTE, &bytes, stored_length);
        dbus_message_iter_close_container(&arguments, &array);
    } else if (dbus_message_is_method_call(message, INTERFACE, "Emit")) {
        reply = dbus_message_new_method_return(message);
        signal = dbus_message_new_signal(PATH, INTERFACE, "Pinged");
    } else {
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    }
    dbus_connection_send(connection, reply, NULL);
    dbus_message_unref(reply);
    if (signal) {
        dbus_connection_send(connection, signal, NULL);
        dbus_message_unref(signal);
    }
    return DBUS_HANDLER_RESULT_HANDLED;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: pasteboard-c-floor ADDRESS\n");
        return 64;
    }
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(argv[1], &error);
    if (!connection || !dbus_bus_register(connection, &error)) {
        fprintf(stderr, "pasteboard-c-floor: cannot connect to %s: %s\n", argv[1], error.message);
        return 69;
    }
    if (dbus_bus_request_name(connection, NAME, DBUS_NAME_FLAG_DO_NOT_QUEUE, &error) != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
        fprintf(stderr, "pasteboard-c-floor: cannot own %s\n", NAME);
        return 69;
    }
    static const DBusObjectPathVTable table = {.message_function = handle};
    dbus_connection_register_object_path(connection, PATH, &table, NULL);
    while (dbus_connection_read_write_dispatch(connection, -1)) {
    }
    return 0;
}
