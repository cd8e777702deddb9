/* A guest that reaches for the host's network: a TCP listener on the host's 127.0.0.1:PORT and
 * an abstract unix socket (the kind X11 and D-Bus listen on, which no file permission guards).
 * Prints "tcp=RC/ERRNO unix=RC/ERRNO ifaces=N" (RC 0: connected; N: interfaces it sees).
 * Usage: net_guest PORT ABSTRACT_NAME */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void report(const char* key, int rc) {
  printf("%s=%d/%d ", key, rc < 0 ? -1 : 0, rc < 0 ? errno : 0);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: net_guest PORT ABSTRACT_NAME\n");
    return 2;
  }
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in in;
  memset(&in, 0, sizeof in);
  in.sin_family = AF_INET;
  in.sin_port = htons((unsigned short)atoi(argv[1]));
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  report("tcp", connect(s, (struct sockaddr*)&in, sizeof in));
  close(s);

  s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un un;
  memset(&un, 0, sizeof un);
  un.sun_family = AF_UNIX;
  size_t n = strlen(argv[2]);
  if (n > sizeof un.sun_path - 1) n = sizeof un.sun_path - 1;
  memcpy(un.sun_path + 1, argv[2], n); /* sun_path[0] == 0: the abstract namespace */
  report("unix", connect(s, (struct sockaddr*)&un,
                         (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)));
  close(s);

  int ifaces = -2; /* /proc/net/dev: two header lines, then one per interface */
  FILE* f = fopen("/proc/net/dev", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f)) ifaces++;
  if (f) fclose(f);
  printf("ifaces=%d\n", ifaces);
  return 0;
}
