"""A loopback server that speaks enough RESP to pass for redis, then
misbehaves, for lct replay's tests (no real server does these):

  fake_redis.py PORT endless   SCAN's cursor never comes back to 0
  fake_redis.py PORT slow      each SCAN page takes 0.3 s, for ever
  fake_redis.py PORT http      not redis at all: an HTTP 400 to anything
  fake_redis.py PORT mute      answers PING, then never a SET, EXISTS or GET

It prints "ready" once listening and serves until killed."""
import socket
import sys
import threading
import time


def commands(f):
    """Each command a client sends, as a list of bytes."""
    while True:
        line = f.readline()
        if not line:
            return
        if not line.startswith(b"*"):
            continue
        args = []
        for _ in range(int(line[1:])):
            size = int(f.readline()[1:])
            args.append(f.read(size + 2)[:-2])
        yield args


def serve(conn, mode):
    f = conn.makefile("rb")
    for args in commands(f):
        name = args[0].upper() if args else b""
        if mode == "http":
            out = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
        elif mode == "mute" and name not in (b"PING", b"DBSIZE", b"SCAN"):
            continue
        elif name == b"PING":
            out = b"+PONG\r\n"
        elif name == b"DBSIZE":
            out = b":3\r\n"
        elif name == b"SCAN":
            if mode == "slow":
                time.sleep(0.3)
            out = b"*2\r\n$1\r\n7\r\n*0\r\n"
        else:
            out = b"+OK\r\n"
        try:
            conn.sendall(out)
        except OSError:
            return


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, mode), daemon=True).start()


main()
