mod calls;
