#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <string.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int c,char**v){size_t mb=atoi(v[1]);int huge=atoi(v[2]);size_t n=mb<<20;
for(int r=0;r<3;r++){char*p=mmap(0,n+(2<<20),PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
p=(char*)(((size_t)p+(2<<20)-1)&~((size_t)(2<<20)-1));
if(huge)madvise(p,n,MADV_HUGEPAGE);double t=now();for(size_t i=0;i<n;i+=4096)p[i]=1;double d=now()-t;
struct timespec a;clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&a);
printf("round %d: %zu MiB huge=%d touch %.3f s (%.2f GB/s)\n",r,mb,huge,d,mb/1024.0/d);munmap(p,n);}
}
