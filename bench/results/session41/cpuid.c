#include <stdio.h>
#include <time.h>
#include <cpuid.h>
int main(){unsigned a,b,c,d;struct timespec t0,t1;int n=20000;clock_gettime(CLOCK_MONOTONIC,&t0);
for(int i=0;i<n;i++){__cpuid_count(7,0,a,b,c,d);} clock_gettime(CLOCK_MONOTONIC,&t1);
printf("%.2f us per cpuid (b=%u)\n",((t1.tv_sec-t0.tv_sec)*1e9+(t1.tv_nsec-t0.tv_nsec))/n/1000.0,b);}
