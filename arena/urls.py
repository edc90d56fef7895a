"""The arena's REST API, mounted under ``/api/``."""

from rest_framework.routers import DefaultRouter

router = DefaultRouter()

urlpatterns = router.urls
